"""CSV files in and out: encoding detection, streaming chunks, the column to translate, and an
Excel-safe export. Plain pandas; nothing here imports Chainlit."""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glm1m.errors import CsvError

CHUNK_ROWS = 5_000
# Excel and LibreOffice run a cell starting with one of these as a formula: OWASP's CSV-injection
# list (=, +, -, @, TAB, CR), and NUL from OWASP ASVS 5.0 (requirement 1.2.10).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
NUMBER = re.compile(r"[+-]?(\d{1,3}(,\d{3})+(\.\d*)?|\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
ENCODING_NAMES = {"utf-8-sig": "UTF-8 with BOM", "utf-8": "UTF-8", "utf-16": "UTF-16",
                  "gb18030": "GB18030 (GBK)", "big5": "Big5", "cp932": "Shift_JIS (Windows-31J)",
                  "cp949": "EUC-KR (Windows-949)", "latin_1": "Latin-1 (ISO-8859-1)"}
SAMPLE_BYTES = 1 << 16  # of lines with non-ASCII bytes: enough for the detector, read at once
ASCII_CONTEXT_BYTES = 1 << 12
SAVE_AS_UTF8 = "Save it again as 'CSV UTF-8' from your spreadsheet."


@dataclass(frozen=True)
class CsvSource:
    path: Path
    encoding: str
    columns: tuple[str, ...]
    column: str  # the one to translate (the first, when several are)
    name: str = ""  # as the user knows the file (an upload is stored under another name)
    targets: tuple[str, ...] = ()  # every column to translate, when more than `column`

    @property
    def chosen(self) -> tuple[str, ...]:
        return self.targets if self.targets and self.targets[0] == self.column else (self.column,)

    @property
    def shown_name(self) -> str:
        return self.name or self.path.name

    @property
    def encoding_name(self) -> str:
        return encoding_name(self.encoding)


def encoding_name(encoding: str) -> str:
    """How a person knows the encoding: "Windows-1252", not "cp1252"."""
    if encoding in ENCODING_NAMES:
        return ENCODING_NAMES[encoding]
    if re.fullmatch(r"cp125\d", encoding):
        return f"Windows-{encoding[2:]}"
    return encoding.replace("_", "-").upper().replace("ISO8859-", "ISO-8859-")


def detect_encoding(path: Path, name: str | None = None) -> str:
    """UTF-8 (with or without a BOM) or UTF-16 with a BOM; else what charset-normalizer finds
    (GB18030 for GBK files, Windows-1252 for Western ones, ...). The whole file is decoded with
    the result, so a bad byte deep in it, or a last character cut short, gets the sentence."""
    name = name or path.name
    with path.open("rb") as f:
        head = f.read(3)
    if head == codecs.BOM_UTF8:
        _check_whole(path, "utf-8", name, skip=3)
        return "utf-8-sig"
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        _check_whole(path, "utf-16", name)
        return "utf-16"
    bad = _first_bad_byte(path, "utf-8")
    if bad is None:
        return "utf-8"
    offset, at_end = bad
    if at_end and not _ascii_up_to(path, offset):  # UTF-8 throughout, but a download cut short
        raise CsvError(f"{name} is UTF-8 text cut short inside its last character (byte {offset}). "
                       f"Download or export it again.")
    encoding = _guess(_sample(path))
    if encoding is None:
        raise CsvError(f"{name} is neither UTF-8 nor GBK/GB18030 text, nor in any other encoding "
                       f"glm1m recognises (byte {offset} is not UTF-8). {SAVE_AS_UTF8}")
    _check_whole(path, encoding, name)
    return encoding


def _guess(sample: bytes) -> str | None:
    """charset-normalizer's verdict, with GBK and Windows-1252 (what Chinese and Western Excel
    write) scored on their own: it skips single-byte code pages once a CJK one fits ("São" fits
    Big5), and ranks Baltic or Central European pages over Windows-1252 by tiny margins."""
    from charset_normalizer import from_bytes  # imported here: `glm1m --help` stays fast

    # A CSV's commas, quotes, newlines and digits must read as themselves (no UTF-16 or UTF-7).
    general = [m for m in from_bytes(sample) if _ascii_compatible(m.encoding)]
    best = general[0] if general else None
    gbk, western = (from_bytes(sample, cp_isolation=[e]).best() for e in ("gb18030", "cp1252"))
    # On 1,000 generated files of 1-50 rows this named all 486 GBK ones and 503 of 514 Western
    # ones right (the rest another Latin code page); charset-normalizer's best() named 399 and 48.
    if gbk is not None and _mostly_gb2312(str(gbk)) and (
            best is None or best.coherence <= gbk.coherence + 0.1):  # no language read better
        return "gb18030"
    if western is not None and _mostly_lone(sample) and (
            best is None or (western.chaos <= best.chaos + 0.1
                             and western.coherence >= best.coherence - 0.2)):
        return "cp1252"
    if best is None:
        return None
    return "gb18030" if best.encoding in ("gbk", "gb2312") else best.encoding


def _mostly_gb2312(text: str) -> bool:
    """Chinese as Chinese Excel writes it is nearly all GB2312 characters (both bytes 0xA1-0xFE);
    Latin text misread as GBK pairs each accented letter's byte with the ASCII letter after it,
    Big5 and Shift_JIS put many lead or trail bytes below 0xA1."""
    chars = [c.encode("gb18030") for c in text if not c.isascii()]
    common = sum(1 for b in chars if len(b) == 2 and b[0] >= 0xA1 and b[1] >= 0xA1)
    return bool(chars) and common >= 0.8 * len(chars)


NON_ASCII = re.compile(rb"[\x80-\xff]")
LONE_NON_ASCII = re.compile(rb"(?<![\x80-\xff])[\x80-\xff](?![\x80-\xff])")


def _mostly_lone(sample: bytes) -> bool:
    """Whether most non-ASCII bytes stand alone between ASCII ones, as accented letters do in
    Western text ("Müller", "café"); CJK characters and Cyrillic or Greek words come in runs."""
    return 2 * len(LONE_NON_ASCII.findall(sample)) >= len(NON_ASCII.findall(sample))


def _ascii_compatible(encoding: str) -> bool:
    probe = ",;\t\"'\r\n 0123456789 azAZ"
    try:
        return probe.encode(encoding) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def _sample(path: Path) -> bytes:
    """The detector's evidence: the lines with non-ASCII bytes, up to SAMPLE_BYTES, among ASCII
    lines up to ASCII_CONTEXT_BYTES (a short file is passed whole). Lines are whole characters
    (every encoding left to guess keeps a newline byte a newline); a piece of a line (the last
    one, maybe cut short, or one longer than SAMPLE_BYTES) is cut to character boundaries, and
    kept whole only when it is the only evidence."""
    kept: list[bytes] = []
    non_ascii = ascii_ = 0
    tail, at_line_start = b"", True
    with path.open("rb") as f:
        while non_ascii < SAMPLE_BYTES and (piece := f.readline(SAMPLE_BYTES)):
            starts, at_line_start = at_line_start, piece.endswith(b"\n")
            if not (starts and at_line_start):
                tail = tail or piece
                piece = _whole_characters(piece, starts)
            if not piece.isascii():
                kept.append(piece)
                non_ascii += len(piece)
            elif ascii_ < ASCII_CONTEXT_BYTES:
                kept.append(piece)
                ascii_ += len(piece)
    return b"".join(kept) if non_ascii else b"".join(kept) + tail


ASCII_BYTE = re.compile(rb"[\x00-\x7f]")
UP_TO_AN_ASCII_BYTE = re.compile(rb".*[\x00-\x7f]", re.DOTALL)


def _whole_characters(piece: bytes, starts_a_line: bool) -> bytes:
    """`piece` cut to character boundaries. A character starts after every byte below 0x80 (no
    GBK, Big5 or Shift_JIS character goes on past one; only rare GB18030 four-byte ones do); a
    line of double-byte characters only is cut to an even length."""
    if not starts_a_line:
        first = ASCII_BYTE.search(piece)
        if first is None:
            return b""
        piece = piece[first.end():]
    last = UP_TO_AN_ASCII_BYTE.match(piece)
    return last.group() if last else piece[:len(piece) // 2 * 2]


def _ascii_up_to(path: Path, end: int) -> bool:
    with path.open("rb") as f:
        while end > 0 and (block := f.read(min(end, 1 << 20))):
            if not block.isascii():
                return False
            end -= len(block)
    return True


def _first_bad_byte(path: Path, encoding: str, skip: int = 0) -> tuple[int, bool] | None:
    """Where decoding the whole file first fails, and whether it is a last character cut short."""
    decoder = codecs.getincrementaldecoder(encoding)()
    offset, start, at_end = skip, skip, False
    with path.open("rb") as f:
        f.seek(skip)
        try:
            while block := f.read(1 << 20):
                start = offset - len(decoder.getstate()[0])  # bytes held from the last block
                decoder.decode(block)
                offset += len(block)
            start, at_end = offset - len(decoder.getstate()[0]), True
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as error:
            return start + error.start, at_end
    return None


def _check_whole(path: Path, encoding: str, name: str, skip: int = 0) -> None:
    bad = _first_bad_byte(path, encoding, skip)
    if bad is None:
        return
    shown = encoding_name(encoding)
    if bad[1]:
        raise CsvError(f"{name} is {shown} text cut short inside its last character (byte {bad[0]}). "
                       f"Download or export it again.")
    raise CsvError(f"{name} reads as {shown} text, but byte {bad[0]} is not {shown}: the file is "
                   f"damaged or mixes encodings. {SAVE_AS_UTF8}")


def _reader(path: Path, encoding: str, **kw) -> Any:
    # dtype=str and keep_default_na=False: cells stay exactly as written ("NA", "001", "").
    return pd.read_csv(path, encoding=encoding, dtype=str, keep_default_na=False,
                       chunksize=CHUNK_ROWS, **kw)


def read_chunks(source: CsvSource) -> Iterator[pd.DataFrame]:
    """The file in chunks of CHUNK_ROWS rows, so 100k rows never sit in memory at once."""
    try:
        yield from _reader(source.path, source.encoding)
    except pd.errors.ParserError as error:
        raise CsvError(f"{source.shown_name} has a malformed row ({error}). Fix that row, or save "
                       f"the file again from your spreadsheet.") from error
    except UnicodeDecodeError as error:  # detect_encoding read it all: it changed since
        raise CsvError(f"{source.shown_name} no longer reads as {source.encoding_name}: it was "
                       f"changed while being translated. Run the translation again.") from error


def open_source(path: Path, column: str | None = None, name: str | None = None,
                columns: Sequence[str] = ()) -> CsvSource:
    """Check the file and choose the column: the named one (or `columns`, several), else the
    first text column. `name` is the file's name in messages (default: the path's)."""
    name = name or path.name
    if not path.exists() or path.stat().st_size == 0:
        raise CsvError(f"{name} is empty: there is nothing to translate.")
    encoding = detect_encoding(path, name)
    try:
        with _reader(path, encoding) as reader:  # closed: the file is not left open to the GC
            first = next(reader, None)
    except pd.errors.EmptyDataError as error:
        raise CsvError(f"{name} has no header row and no data.") from error
    except pd.errors.ParserError as error:
        raise CsvError(f"{name} is not a readable CSV ({error}).") from error
    if first is None or first.empty:
        raise CsvError(f"{name} has a header but no rows: there is nothing to translate.")
    header = tuple(str(c) for c in first.columns)
    wanted = tuple(dict.fromkeys(columns or ([column] if column is not None else [])))
    for each in wanted:
        if each not in header:
            raise CsvError(f"{name} has no column named {each!r}; its columns are "
                           f"{', '.join(header)}.")
    chosen = wanted[0] if wanted else first_text_column(first)
    return CsvSource(path, encoding, header, chosen, name, wanted if len(wanted) > 1 else ())


def first_text_column(frame: pd.DataFrame) -> str:
    """The first column with a non-empty cell that is not a number (ids and prices are skipped)."""
    for name in frame.columns:
        values = frame[name].astype(str)
        if any(v.strip() and not NUMBER.fullmatch(v.strip()) for v in values):
            return str(name)
    return str(frame.columns[0])


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
    try:
        frame = pd.read_csv(path, encoding=encoding, dtype=str, keep_default_na=False, header=None)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as error:
        raise CsvError(f"The glossary {name} is not a two-column CSV ({error}).") from error
    if frame.shape[1] < 2:
        raise CsvError(f"The glossary {name} needs two columns: term, translation.")
    pairs = [(str(a).strip(), str(b).strip()) for a, b in zip(frame[0], frame[1], strict=True)
             if str(a).strip()]
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
